package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progressLine shows where a long command is on one terminal line, redrawn
// in place a few times a second once the command has taken more than
// progressDelay, and erased when it ends, so that nothing of it stays on the
// terminal. bench and check use it. Its methods may be called on a nil
// *progressLine and then do nothing.
type progressLine struct {
	w     io.Writer
	label string        // the command, first on the line
	extra func() string // appended to the text at each redraw; may be nil
	start time.Time
	mu    sync.Mutex
	text  string
	shown bool
	stop  chan struct{}
	done  chan struct{}
}

// progressDelay is how long a command goes before its progress is shown,
// and progressTick how often the line is redrawn after that.
var progressDelay, progressTick = time.Second, 100 * time.Millisecond

// startProgress starts redrawing a progress line for the command label on
// w; extra, when not nil, adds live figures (counts) to each redraw.
func startProgress(w io.Writer, label string, extra func() string) *progressLine {
	p := &progressLine{w: w, label: label, extra: extra, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(progressTick)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
				p.draw()
			}
		}
	}()
	return p
}

// set records where the command is.
func (p *progressLine) set(text string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.text = text
	p.mu.Unlock()
}

func (p *progressLine) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := time.Since(p.start)
	if elapsed < progressDelay || p.text == "" {
		return
	}
	text := p.text
	if p.extra != nil {
		text += ": " + p.extra()
	}
	fmt.Fprintf(p.w, "\r%s%s %s (%ds)\033[K", prefix, p.label, text, int(elapsed.Seconds()))
	p.shown = true
}

// close stops the redrawing and erases the line.
func (p *progressLine) close() {
	if p == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
