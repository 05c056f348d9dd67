package ops_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// requestFieldDocs returns the doc comment of each field of Request, by
// field name; fields declared under one comment share it.
func requestFieldDocs(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "plan.go", nil, parser.ParseComments)
	require.NoError(t, err)
	docs := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Request" {
			return true
		}
		shared := ""
		for _, field := range ts.Type.(*ast.StructType).Fields.List {
			doc := field.Doc.Text() + field.Comment.Text()
			if field.Doc != nil {
				shared = doc
			} else if doc == "" {
				doc = shared // under the comment of the fields above
			}
			for _, name := range field.Names {
				docs[name.Name] = strings.Join(strings.Fields(doc), " ")
			}
		}
		return false
	})
	require.NotEmpty(t, docs, "type Request in plan.go")
	return docs
}

// TestRequestDocFollowsTheRegistry: what Request's doc says of Indices
// and Axis holds for every operator: the operators that take no indices
// or optional ones, or indices of one dtype, are named, and so is every
// axis default other than 0.
func TestRequestDocFollowsTheRegistry(t *testing.T) {
	docs := requestFieldDocs(t)
	indices, axis := docs["Indices"], docs["Axis"]
	for _, op := range ops.All() {
		switch {
		case !op.TakesIndices():
			assert.Contains(t, indices, op.Name+", which takes none", "Request.Indices")
		case op.IndicesOptional:
			assert.Contains(t, indices, op.Name+", whose "+op.InputName("indices")+" are optional", "Request.Indices")
		}
		if op.IndicesDType != tensor.Invalid {
			assert.Contains(t, indices, "must be "+op.IndicesDType.String(), "Request.Indices: %s", op.Name)
		}
		if op.TakesAxis() && !op.AxisRequired && op.AxisDefault != 0 {
			assert.Contains(t, axis, fmt.Sprintf("%d for %s", op.AxisDefault, op.Name), "Request.Axis")
		}
		if op.InputName("data") != "data" {
			assert.Contains(t, indices, op.Name+" calls them "+op.InputName("data")+", "+op.InputName("indices")+" and "+op.InputName("updates"),
				"Request.Data, Indices, Updates")
		}
	}
	assert.Contains(t, docs["Mode"], `"" means the attribute is absent: linear`)
}
