package knobs

import (
	"errors"
	"testing"
)

type fakeOptions struct{ name string }

type fakeBackend struct {
	opts fakeOptions
	k    Knobs
}

func TestOpenCallsTheRegisteredFunction(t *testing.T) {
	saved := opener
	t.Cleanup(func() { opener = saved })
	opener = nil

	if _, err := Open[fakeOptions, *fakeBackend](fakeOptions{"x"}, Knobs{}); err == nil {
		t.Fatal("Open with nothing registered succeeded")
	}
	Register(func(o fakeOptions, k Knobs) (*fakeBackend, error) {
		if o.name == "" {
			return nil, errors.New("no name")
		}
		return &fakeBackend{o, k}, nil
	})
	b, err := Open[fakeOptions, *fakeBackend](fakeOptions{"x"}, Knobs{ForceCAS: true, Fault: MinAsMax})
	if err != nil {
		t.Fatal(err)
	}
	if b.opts.name != "x" || !b.k.ForceCAS || b.k.Fault != MinAsMax {
		t.Fatalf("the options and knobs did not reach the function: %+v", b)
	}
	if _, err := Open[fakeOptions, *fakeBackend](fakeOptions{}, Knobs{}); err == nil || err.Error() != "no name" {
		t.Fatalf("the function's error is not returned: %v", err)
	}
	if _, err := Open[string, *fakeBackend]("x", Knobs{}); err == nil {
		t.Fatal("Open with types other than the registered function's succeeded")
	}
}
