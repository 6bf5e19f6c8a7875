package tools

import (
	"encoding/json"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// argTypes are the argument types whose schema a Go type cannot say by
// itself: the closed sets of words.
var argTypes = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[TodoStatus](): {Type: "string", Enum: []any{TodoPending, TodoInProgress, TodoCompleted}},
}

// parametersOf derives a built-in tool's parameter schema from its
// argument struct, with the library the program's Go tools use: json tags
// name the properties, a field without omitempty/omitzero is required, a
// pointer field may be null, and a `jsonschema:"…"` tag describes a field
// to the model. A list argument is a list, never null: the library reads
// a Go slice as nullable, which the schemas the model has always been sent
// do not say. A struct it cannot describe is a programming error, caught
// at start-up.
func parametersOf[Args any]() json.RawMessage {
	s, err := jsonschema.For[Args](&jsonschema.ForOptions{TypeSchemas: argTypes})
	if err != nil {
		panic(err)
	}
	listsNotNull(s)
	raw, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return raw
}

// listsNotNull turns every ["null","array"] of s into "array".
func listsNotNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" && s.Types[1] == "array" {
		s.Type, s.Types = "array", nil
	}
	for _, p := range s.Properties {
		listsNotNull(p)
	}
	listsNotNull(s.Items)
}
