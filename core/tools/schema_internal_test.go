package tools

import "testing"

// TestAnArgumentStructNoSchemaSaysPanicsAtStartUp holds that a built-in
// tool's argument struct the schema library cannot describe is caught
// when the tool is defined, not sent to a model.
func TestAnArgumentStructNoSchemaSaysPanicsAtStartUp(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("parametersOf accepted a struct with a channel field")
		}
	}()
	parametersOf[struct {
		C chan int `json:"c"`
	}]()
}
