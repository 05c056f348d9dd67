//go:build cgo

package vk

/*
#include "gsvk.h"
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
	"sync"
)

// messageLog collects the warnings and errors reported through a
// VK_EXT_debug_utils messenger. The callback may run on any thread.
type messageLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *messageLog) add(s string) {
	l.mu.Lock()
	l.msgs = append(l.msgs, s)
	l.mu.Unlock()
}

// reset replaces the log's messages with msgs.
func (l *messageLog) reset(msgs []string) {
	l.mu.Lock()
	l.msgs = append([]string(nil), msgs...)
	l.mu.Unlock()
}

func (l *messageLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}

func severityName(s uint32) string {
	switch {
	case s&C.GS_DEBUG_SEVERITY_ERROR != 0:
		return "error"
	case s&C.GS_DEBUG_SEVERITY_WARNING != 0:
		return "warning"
	case s&C.GS_DEBUG_SEVERITY_INFO != 0:
		return "info"
	}
	return "verbose"
}

func messageTypeName(t uint32) string {
	switch {
	case t&C.GS_DEBUG_TYPE_VALIDATION != 0:
		return "validation"
	case t&C.GS_DEBUG_TYPE_PERFORMANCE != 0:
		return "performance"
	}
	return "general"
}

// gsvkDebugMessage is called from the C debug messenger callback. user is the
// cgo.Handle of the instance's messageLog.
//
//export gsvkDebugMessage
func gsvkDebugMessage(severity, types C.uint32_t, id, msg *C.char, user C.uintptr_t) {
	defer func() {
		// A panic must not unwind into the driver.
		_ = recover()
	}()
	if user == 0 {
		return
	}
	l, ok := cgo.Handle(user).Value().(*messageLog)
	if !ok {
		return
	}
	l.add(fmt.Sprintf("%s %s [%s] %s", messageTypeName(uint32(types)), severityName(uint32(severity)),
		C.GoString(id), C.GoString(msg)))
}
