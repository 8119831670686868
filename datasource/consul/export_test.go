package consul_test

import "strconv"

func revision(index uint64) string { return strconv.FormatUint(index, 10) }
