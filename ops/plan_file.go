package ops

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
)

// DecodePlanInput reads a plan file (the JSON of [PlanInput], as `airlock ops plan --file`
// takes it) strictly: an unknown field is an error naming it, so a typo such as
// "snapshot_command" is not silently dropped. A relative workdir is resolved against
// baseDir (the directory holding the file); an empty one means baseDir.
func DecodePlanInput(data []byte, baseDir string) (PlanInput, error) {
	var in PlanInput
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			want := te.Type.String()
			if te.Type.Kind() == reflect.String {
				want = "string"
			}
			return in, fieldErr(strings.TrimPrefix(te.Field, "OperationPlan."), fmt.Sprintf("has the wrong type: expected %s, found a JSON %s", want, te.Value))
		case errors.As(err, &se):
			return in, fieldErr("plan file", fmt.Sprintf("is not valid JSON at byte %d: %v", se.Offset, err))
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return in, fieldErr(name, "is not a plan field (see `airlock ops plan --help` for the format)")
		}
		return in, fieldErr("plan file", err.Error())
	}
	if dec.More() {
		return in, fieldErr("plan file", "holds more than one JSON value")
	}
	if in.Workdir == "" {
		in.Workdir = baseDir
	} else if !filepath.IsAbs(in.Workdir) {
		in.Workdir = filepath.Join(baseDir, in.Workdir)
	}
	return in, nil
}
