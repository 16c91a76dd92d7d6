//go:build !linux

package child

// stopped cannot tell without /proc.
func stopped(int) (bool, bool) { return false, false }
