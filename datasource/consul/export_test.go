package consul_test

import "strconv"

func revision(index uint64) string { return strconv.FormatUint(index, 10) }

func mustUint(t interface{ Fatal(...any) }, s string) uint64 {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
