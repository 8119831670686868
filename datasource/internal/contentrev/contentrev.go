// Package contentrev is the revision of a document for backends that have
// no version of their own (file, Redis, the framework's cache): a hash of
// its content.
package contentrev

import (
	"crypto/sha256"
	"encoding/hex"
)

// Of is the content revision of data: the first 16 bytes of its SHA-256,
// in hex.
func Of(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}
