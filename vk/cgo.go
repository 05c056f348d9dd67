//go:build cgo

package vk

/*
#include "gsvk.h"
*/
import "C"

import "unsafe"

// setGetInstanceProcAddr hands vkGetInstanceProcAddr to this package's C
// helpers (gsvk.c).
func setGetInstanceProcAddr(fn unsafe.Pointer) {
	C.gs_set_gipa(fn)
}
