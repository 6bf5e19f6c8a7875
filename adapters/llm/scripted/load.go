package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// LoadScripts reads a JSON file of scripts by model name,
// {"<model>": {"exchanges": [...]}}, with the snake_case field names of
// Script, Exchange, Step, ToolCall, Usage and Failure. Unknown fields and
// tool-call arguments that are not JSON are refused, so a typo fails at load
// rather than as a puzzling answer.
func LoadScripts(path string) (map[string]Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scripted: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var scripts map[string]Script
	if err := dec.Decode(&scripts); err != nil {
		return nil, fmt.Errorf("scripted: %s: %w", path, err)
	}
	for model, sc := range scripts {
		if err := validate(sc); err != nil {
			return nil, fmt.Errorf("scripted: %s: model %q: %w", path, model, err)
		}
	}
	return scripts, nil
}

func validate(sc Script) error {
	for i, ex := range sc.Exchanges {
		if len(ex.Steps) == 0 {
			return fmt.Errorf("exchange %d has no steps", i)
		}
		for j, st := range ex.Steps {
			for k, tc := range st.ToolCalls {
				if tc.Name == "" {
					return fmt.Errorf("exchange %d step %d tool call %d has no name", i, j, k)
				}
				if tc.Arguments != "" && !json.Valid([]byte(tc.Arguments)) {
					return fmt.Errorf("exchange %d step %d tool call %d: arguments are not JSON", i, j, k)
				}
			}
			if st.FailTimes < 0 || st.ChunkSize < 0 || st.DelayMS < 0 {
				return fmt.Errorf("exchange %d step %d: negative fail_times, chunk_size or delay_ms", i, j)
			}
		}
	}
	return nil
}
