package child

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// stopped reports whether every thread of process pid is stopped by a signal (state T in
// /proc/<pid>/task/*/stat), and whether /proc could tell.
func stopped(pid int) (bool, bool) {
	tasks, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "stat"))
	if err != nil || len(tasks) == 0 {
		return false, false
	}
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			return false, false
		}
		// The state follows the command name, which is in parentheses and may hold spaces.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) {
			return false, false
		}
		if b[i+2] != 'T' {
			return false, true
		}
	}
	return true, true
}
