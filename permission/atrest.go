package permission

import (
	"encoding/json"
	"fmt"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/redact"
)

// What the permission tables hold is redacted by gorm hooks, whatever the write looks
// like (Create, Save, Updates with a map or a struct): a pending request's command and
// parameters, its decision and answer, and every audit row. The broker keeps the real
// parameters in memory, so an allowed call runs as asked; a request recovered after a
// restart is matched by its redacted form and takes the parameters of the caller that
// re-attaches (see Broker.attach).

// BeforeSave redacts a pending request before it is written.
func (r *PendingRecord) BeforeSave(tx *gorm.DB) error {
	r.redact()
	if d, ok := tx.Statement.Dest.(*PendingRecord); ok && d != r {
		d.redact()
	}
	redactMap(tx, map[string]func(string) string{
		"subject": redact.String, "request_json": redactJSONText, "decision_json": redactJSONText, "answer_json": redactJSONText,
		"asked_params": redactJSONText,
	})
	return nil
}

func (r *PendingRecord) redact() {
	r.Subject = redact.String(r.Subject)
	r.RequestJSON = redactJSONText(r.RequestJSON)
	r.DecisionJSON = redactJSONText(r.DecisionJSON)
	r.AnswerJSON = redactJSONText(r.AnswerJSON)
	r.AskedParams = redactJSONText(r.AskedParams)
}

// BeforeSave redacts an audit row before it is written.
func (r *AuditRecord) BeforeSave(tx *gorm.DB) error {
	r.redact()
	if d, ok := tx.Statement.Dest.(*AuditRecord); ok && d != r {
		d.redact()
	}
	redactMap(tx, map[string]func(string) string{
		"subject": redact.String, "reasons": redactJSONText, "rule": redact.String, "cwd": redact.String,
		"asked_by": redact.String, "answered_by": redact.String, "task": redact.String, "ran_error": redact.String,
	})
	return nil
}

func (r *AuditRecord) redact() {
	r.Subject = redact.String(r.Subject)
	r.Reasons = redactJSONText(r.Reasons)
	r.Rule = redact.String(r.Rule)
	r.Cwd = redact.String(r.Cwd)
	r.AskedBy = redact.String(r.AskedBy)
	r.AnsweredBy = redact.String(r.AnsweredBy)
	r.Task = redact.String(r.Task)
	r.RanError = redact.String(r.RanError)
}

// BeforeSave redacts a grant's pattern before it is written: a grant for a command with
// a credential is remembered, and matched (Grants.Match), in redacted form.
func (g *GrantRecord) BeforeSave(tx *gorm.DB) error {
	g.Pattern = redact.String(g.Pattern)
	redactMap(tx, map[string]func(string) string{"pattern": redact.String})
	return nil
}

// redactJSONText redacts a JSON document keeping it valid; text that is not JSON is
// redacted as text.
func redactJSONText(s string) string {
	if s == "" {
		return s
	}
	b, err := redact.RawJSON([]byte(s))
	if err != nil {
		return redact.String(s)
	}
	return string(b)
}

// redactMap redacts the string values of an Updates (or Update) call given a map, by
// column name.
func redactMap(tx *gorm.DB, cols map[string]func(string) string) {
	m, ok := tx.Statement.Dest.(map[string]any)
	if !ok || tx.Statement.Schema == nil {
		return
	}
	for k, v := range m {
		s, isString := v.(string)
		field := tx.Statement.Schema.LookUpField(k)
		if !isString || field == nil {
			continue
		}
		if fn := cols[field.DBName]; fn != nil {
			m[k] = fn(s)
		}
	}
}

// atRest is the request as the database keeps it: what a recovered request is, and
// what a re-attaching caller's request is compared as.
func atRest(r Request) (Request, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return Request{}, fmt.Errorf("encode request: %w", err)
	}
	var out Request
	if err := json.Unmarshal([]byte(redactJSONText(string(b))), &out); err != nil {
		return Request{}, fmt.Errorf("decode redacted request: %w", err)
	}
	return out, nil
}
