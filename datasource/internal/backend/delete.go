package backend

import (
	"fmt"

	"github.com/bulwark-go/bulwark/datasource"
)

// MayDelete decides what a backend's Delete does with the document it
// found as cur, when its caller expects expectRevision: remove it (true),
// leave it because it is already gone (false, nil: deleting is
// idempotent), or refuse because it is at another revision (false, an
// error wrapping datasource.ErrConflict that names both revisions; the
// backend prefixes its own name and the document's). expectRevision ""
// accepts any revision. A backend whose server compares the revision
// itself needs it only to describe what it found.
func MayDelete(cur datasource.Snapshot, expectRevision string) (bool, error) {
	switch {
	case cur.Missing:
		return false, nil
	case expectRevision != "" && cur.Revision != expectRevision:
		return false, fmt.Errorf("document is at revision %s, expected %s: %w", cur.Revision, expectRevision, datasource.ErrConflict)
	}
	return true, nil
}
