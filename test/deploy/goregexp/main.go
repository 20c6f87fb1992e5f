// Command goregexp answers, with Go's regexp package (RE2, which Helm applies
// to values.schema.json), whether each sample matches each pattern, so the
// deploy tests can hold ajv's ECMAScript reading of the schema to Helm's.
//
// Input on stdin: {"patterns": [...], "samples": [...]} (JSON). Output on
// stdout: one entry per pattern, {"error": "..."} when Go cannot compile it,
// else {"matches": [bool per sample]}.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
)

type input struct {
	Patterns []string `json:"patterns"`
	Samples  []string `json:"samples"`
}

type result struct {
	Error   string `json:"error,omitempty"`
	Matches []bool `json:"matches,omitempty"`
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, "goregexp:", err)
		os.Exit(2)
	}
	out := make([]result, len(in.Patterns))
	for i, pattern := range in.Patterns {
		re, err := regexp.Compile(pattern)
		if err != nil {
			out[i] = result{Error: err.Error()}
			continue
		}
		matches := make([]bool, len(in.Samples))
		for j, sample := range in.Samples {
			matches[j] = re.MatchString(sample)
		}
		out[i] = result{Matches: matches}
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "goregexp:", err)
		os.Exit(2)
	}
}
