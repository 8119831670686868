package file_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/file"
)

// Promoting a canary overlay: its document becomes the base (a
// compare-and-set write), then the overlay is removed at the revision that
// was promoted, so an edit of the overlay made meanwhile is not lost
// silently.
func ExampleSource_Delete() {
	dir, err := os.MkdirTemp("", "bulwark-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	base := file.New(filepath.Join(dir, "flow.json"))
	canary := base.Overlay("canary").(*file.Source)

	baseSnap, err := base.Write(ctx, []byte(`[{"resource":"GET /orders","count":100}]`), "")
	if err != nil {
		log.Fatal(err)
	}
	ov, err := canary.Write(ctx, []byte(`[{"resource":"GET /orders","count":130}]`), "")
	if err != nil {
		log.Fatal(err)
	}
	// Someone edits the overlay after the promoting tool read it.
	if _, err := canary.Write(ctx, []byte(`[{"resource":"GET /orders","count":150}]`), ov.Revision); err != nil {
		log.Fatal(err)
	}
	err = canary.Delete(ctx, ov.Revision)
	fmt.Println("stale revision is a conflict:", errors.Is(err, datasource.ErrConflict))

	// The tool reads again and promotes what the overlay holds now.
	if ov, err = canary.Read(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := base.Write(ctx, ov.Data, baseSnap.Revision); err != nil {
		log.Fatal(err)
	}
	fmt.Println("delete:", canary.Delete(ctx, ov.Revision))
	fmt.Println("delete again:", canary.Delete(ctx, ov.Revision))

	now, err := base.Read(ctx)
	if err != nil {
		log.Fatal(err)
	}
	gone, err := canary.Read(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("base: %s, overlay missing: %v\n", now.Data, gone.Missing)
	// Output:
	// stale revision is a conflict: true
	// delete: <nil>
	// delete again: <nil>
	// base: [{"resource":"GET /orders","count":150}], overlay missing: true
}

// Listing the canary overlays of a document: the files beside it named
// after it, ".overlay." and a group. Other files of the directory, even
// those whose names begin the same way, are not overlays.
func ExampleSource_Overlays() {
	dir, err := os.MkdirTemp("", "bulwark-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	base := file.New(filepath.Join(dir, "flow.json"))
	for _, g := range []string{"eu-west", "canary"} {
		if _, err := base.Overlay(g).(*file.Source).Write(ctx, []byte(`[]`), ""); err != nil {
			log.Fatal(err)
		}
	}
	for _, name := range []string{"flow.json.history", "flow.json.overlay.canary.bak", "other.json.overlay.canary"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(`[]`), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	groups, err := base.Overlays(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(groups)
	// Output:
	// [canary eu-west]
}

// A service registers itself beside its rule document; a console that
// reads the document lists the instances, and an instance whose beats stop
// is listed stale.
func ExampleSource_Register() {
	dir, err := os.MkdirTemp("", "bulwark-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	src := file.New(filepath.Join(dir, "flow.json"))
	defer src.Close()

	reg, err := src.Register(ctx, datasource.Instance{
		ID: "orders-1", App: "orders", Addr: "10.0.0.7:8080",
		AdminURL: "http://10.0.0.7:8080/debug/bulwark/",
	})
	if err != nil {
		log.Fatal(err)
	}
	list, err := src.Instances(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, in := range list {
		fmt.Println(in.ID, in.App, in.AdminURL, "beats every", in.Interval, "stale:", in.Stale)
	}
	if err := reg.Close(); err != nil { // unregisters
		log.Fatal(err)
	}
	list, _ = src.Instances(ctx)
	fmt.Println("after Close:", len(list))

	// Output:
	// orders-1 orders http://10.0.0.7:8080/debug/bulwark/ beats every 5s stale: false
	// after Close: 0
}
