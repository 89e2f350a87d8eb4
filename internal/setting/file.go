package setting

import (
	"fmt"
	"io"
	"os"
)

// MaxFileBytes bounds a configuration file the server reads (a keyring, a users file, a TLS
// certificate, key or CA bundle): 16 MiB, far beyond any real one, so that a path naming a
// device or a huge file (`--tls-cert /dev/zero`: 2.5 GiB in 8 s, trial 33 m1) is refused
// instead of read without end.
const MaxFileBytes = 16 << 20

// ReadFile reads the configuration file at path, at most MaxFileBytes; a longer one is an
// error naming the path and the limit. Errors of opening and reading are os's.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes, more than a configuration file holds", path, MaxFileBytes)
	}
	return b, nil
}
