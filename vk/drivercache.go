//go:build cgo

package vk

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// Mesa's Vulkan drivers (lavapipe, radv, anv, ...) keep a disk cache of
// compiled shaders of their own, in $MESA_SHADER_CACHE_DIR, else
// $XDG_CACHE_HOME/mesa_shader_cache (set but empty counts as set), else
// mesa_shader_cache under the .cache folder of the user's home folder in
// the password database (not $HOME). They create one level of folder
// there, and where that fails they print a line of their own on stderr
// ("Failed to create ... for shader cache (...)---disabling") and go on
// without the cache. gpuscatter reports a cache it cannot use in one line
// of its own (Options.Warn), so before the first instance is created,
// when Mesa could not create its folder where it would (dirUsable), Mesa's
// cache is disabled (MESA_SHADER_CACHE_DISABLE=true) instead: the run is
// the same, without the driver's line. A
// MESA_SHADER_CACHE_DIR or MESA_SHADER_CACHE_DISABLE the caller set is
// left as it is. Other drivers' caches do not print such lines.

// quietDriverCache disables Mesa's shader cache when the folder it would
// use is unusable (see above). load calls it once, before any instance.
func quietDriverCache() {
	for _, v := range []string{"MESA_SHADER_CACHE_DIR", "MESA_SHADER_CACHE_DISABLE", "MESA_GLSL_CACHE_DIR", "MESA_GLSL_CACHE_DISABLE"} {
		if _, set := os.LookupEnv(v); set {
			return
		}
	}
	if dir, ok := mesaCacheParent(); ok && dirUsable(dir) {
		return
	}
	// With cgo, os.Setenv also sets the C environment the driver reads.
	_ = os.Setenv("MESA_SHADER_CACHE_DISABLE", "true")
}

// mesaCacheParent returns the folder in which Mesa creates its cache
// folder; ok is false when it has none (no password entry).
func mesaCacheParent() (dir string, ok bool) {
	if x, set := os.LookupEnv("XDG_CACHE_HOME"); set {
		return x, true
	}
	u, err := user.Current()
	if err != nil || u.HomeDir == "" {
		return "", false
	}
	return filepath.Join(u.HomeDir, ".cache"), true
}

// dirUsable reports whether Mesa can make its cache folder,
// mesa_shader_cache, in dir: it is there already, or dir is a folder the
// process can create a folder in, or a missing one whose parent is (Mesa
// creates dir then). Whether a folder can be created in is found by
// creating one and removing it: permission bits and access(2) say yes to
// root in a folder no one can create anything in (/sys/kernel).
func dirUsable(dir string) bool {
	if dir == "" {
		return false
	}
	if fi, err := os.Stat(filepath.Join(dir, "mesa_shader_cache")); err == nil {
		return fi.IsDir()
	}
	if fi, err := os.Stat(dir); err == nil {
		return fi.IsDir() && canCreateIn(dir)
	} else if !os.IsNotExist(err) {
		return false
	}
	parent := filepath.Dir(filepath.Clean(dir))
	fi, err := os.Stat(parent)
	return err == nil && fi.IsDir() && canCreateIn(parent)
}

// canCreateIn reports whether a folder can be created in dir, by creating
// one and removing it.
func canCreateIn(dir string) bool {
	probe, err := os.MkdirTemp(dir, ".gpuscatter-probe-")
	if err != nil {
		return false
	}
	os.Remove(probe)
	return true
}

// driverCacheOff returns why the driver of info keeps no compiled code for
// a later process (Device.DriverCacheOff): a driver of Mesa's (its
// driverInfo names Mesa) whose shader cache is turned off by one of the
// variables Mesa reads, true as Mesa reads a boolean (1, true, y, yes in
// any case). "" otherwise.
func driverCacheOff(info DeviceInfo) string {
	if !strings.Contains(info.DriverInfo, "Mesa") {
		return ""
	}
	for _, v := range []string{"MESA_SHADER_CACHE_DISABLE", "MESA_GLSL_CACHE_DISABLE"} {
		switch val := os.Getenv(v); strings.ToLower(val) {
		case "1", "true", "y", "yes":
			return fmt.Sprintf("the driver's shader cache is off (%s=%s)", v, val)
		}
	}
	return ""
}
