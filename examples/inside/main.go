//go:build cgo

// Command inside scatters in an application's own Vulkan device (app.go,
// on vulkan-go), recorded into the application's command buffer.
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/tensor"
)

func main() {
	app := newApp() // its device, and int32 1..8 in its buffer app.table
	defer app.close()
	ctx := context.Background()
	g := must(gpu.OpenExternal(app.external(), gpu.Options{}))
	table := must(g.WrapBuffer(app.table, 0, 32, tensor.Int32, []int{8}, gpu.WrapUsage))
	idx := must(g.Upload(ctx, tensor.MustFromSlice([]int{3, 1}, []int64{1, 3, 1})))
	upd := must(g.Upload(ctx, tensor.MustFromSlice([]int{3}, []int32{10, 20, 30})))
	bt := g.NewBatch()
	must(0, bt.Add(gpu.Call{Op: "ScatterND-18", Reduction: "add", Data: table, Out: table, Indices: idx, Updates: upd}))
	rec := must(bt.Record(ctx, app.begin(), gpu.RecordOptions{})) // no submission of ours
	must(0, app.submit())                                         // the application's, and its fence
	must(0, rec.Result(ctx))                                      // a bad index would show here
	must(0, g.Close())                                            // the application's objects stay
	fmt.Println(app.read())                                       // [1 42 3 24 5 6 7 8]
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
