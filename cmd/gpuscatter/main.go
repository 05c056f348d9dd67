package main

import (
	"context"
	"os"
)

func main() {
	ctx, stop := notifyInterrupt(context.Background())
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
