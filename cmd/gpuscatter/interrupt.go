package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// interruptSignals stop a command cleanly: the context is cancelled, the
// command stops and removes what it had started to write, and gpuscatter
// exits with 128 plus the signal's number, as a shell reports a process
// the signal killed.
var interruptSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// signalNames are the names gpuscatter prints for interruptSignals.
var signalNames = map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"}

// interruptedError is the cause of a context that a signal cancelled.
type interruptedError struct{ sig syscall.Signal }

func (e *interruptedError) Error() string {
	name, ok := signalNames[e.sig]
	if !ok {
		name = e.sig.String()
	}
	return "interrupted by " + name
}

// status is the exit status for the signal: 128 plus its number.
func (e *interruptedError) status() int { return 128 + int(e.sig) }

// notifyInterrupt returns a context that the first of interruptSignals
// cancels with an *interruptedError as its cause. After that first signal
// the handler is removed, so a second one takes its default action and
// ends the process at once. stop releases the handler.
func notifyInterrupt(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, interruptSignals...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			sig, _ := s.(syscall.Signal)
			cancel(&interruptedError{sig: sig})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// interruption returns the signal that cancelled ctx, if one did.
func interruption(ctx context.Context) (*interruptedError, bool) {
	var ie *interruptedError
	if ctx == nil || ctx.Err() == nil || !errors.As(context.Cause(ctx), &ie) {
		return nil, false
	}
	return ie, true
}

// interruptible runs work and returns its error, or ctx's as soon as ctx
// is done, whatever work is blocked in: opening a FIFO that no writer
// opens, reading a pipe that stays silent. A signal must end the run at
// once, and a system call blocked in the kernel cannot be cancelled, so
// work is left running in its goroutine, which the process's exit ends.
func interruptible(ctx context.Context, work func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- work() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
