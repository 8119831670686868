//go:build !race

package nacos_test

const raceEnabled = false
