package dispatch

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/departments"
)

// toOldShape rebuilds table as the code with a boolean network wrote it: col a
// numeric (bool) column holding 0 or 1, and in the JSON column jsonCol (if any)
// "network": true or false.
func toOldShape(t *testing.T, db *gorm.DB, table, col, jsonCol string) {
	t.Helper()
	var ddl string
	if err := db.Raw("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&ddl).Error; err != nil {
		t.Fatal(err)
	}
	newCol := fmt.Sprintf("`%s` text", col)
	if !strings.Contains(ddl, newCol) {
		t.Fatalf("%s: no %s in %s", table, newCol, ddl)
	}
	oldDDL := strings.Replace(strings.Replace(ddl, newCol, fmt.Sprintf("`%s` numeric", col), 1), "`"+table+"`", "`"+table+"_old`", 1)
	var indexes []string
	if err := db.Raw("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", table).Scan(&indexes).Error; err != nil {
		t.Fatal(err)
	}
	steps := []string{
		"PRAGMA foreign_keys = OFF",
		oldDDL,
		fmt.Sprintf("INSERT INTO `%s_old` SELECT * FROM `%s`", table, table),
		fmt.Sprintf("UPDATE `%s_old` SET `%s` = CASE `%s` WHEN 'on' THEN 1 WHEN 'off' THEN 0 ELSE `%s` END", table, col, col, col),
		fmt.Sprintf("DROP TABLE `%s`", table),
		fmt.Sprintf("ALTER TABLE `%s_old` RENAME TO `%s`", table, table),
	}
	if jsonCol != "" {
		steps = append(steps, fmt.Sprintf(`UPDATE %s SET %s = replace(replace(%s, '"network":"on"', '"network":true'), '"network":"off"', '"network":false') WHERE %s IS NOT NULL`, table, jsonCol, jsonCol, jsonCol))
	}
	steps = append(append(steps, indexes...), "PRAGMA foreign_keys = ON")
	for _, s := range steps {
		if err := db.Exec(s).Error; err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	var kind string
	db.Raw(fmt.Sprintf("SELECT typeof(`%s`) FROM `%s` WHERE `%s` IS NOT NULL LIMIT 1", col, table, col)).Scan(&kind)
	if kind != "integer" {
		t.Fatalf("%s.%s holds %q, want the old code's integers", table, col, kind)
	}
}

// TestOldBooleanNetworkRowsStillRead: a database the boolean network setting wrote
// (0/1 columns, "network": true in JSON) opens with the three-valued setting: true reads
// as on, false as off, and the columns then take "allowlist".
func TestOldBooleanNetworkRowsStillRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "airlock.db")
	db := openTestDB(t, path)
	dir := t.TempDir()
	on, off := api.NetworkOn, api.NetworkOff
	dept := departments.Department{Name: "ops", Directory: dir, Defaults: departments.Defaults{Network: &on}}
	if err := db.Create(&dept).Error; err != nil {
		t.Fatal(err)
	}
	task := Task{Name: "nightly", Argv: []string{"true"}, Cwd: dir, Overrides: departments.Defaults{Network: &off}}
	if err := db.Create(&task).Error; err != nil {
		t.Fatal(err)
	}
	override := Policy{SandboxMode: "workspace-write", Network: api.NetworkOn}
	runs := []Run{
		{TaskID: task.ID, ScheduledAt: time.Unix(1, 0).UTC(), Trigger: "schedule", Status: StatusSucceeded, Policy: Policy{SandboxMode: "workspace-write", Network: api.NetworkOn}, PolicyOverride: &override},
		{TaskID: task.ID, ScheduledAt: time.Unix(2, 0).UTC(), Trigger: "schedule", Status: StatusSucceeded, Policy: Policy{SandboxMode: "workspace-write", Network: api.NetworkOff}},
	}
	if err := db.Create(&runs).Error; err != nil {
		t.Fatal(err)
	}
	toOldShape(t, db, "departments", "default_network", "")
	toOldShape(t, db, "tasks", "override_network", "")
	toOldShape(t, db, "runs", "policy_network", "policy_override")
	var js string
	db.Raw("SELECT policy_override FROM runs WHERE id = ?", runs[0].ID).Scan(&js)
	if !strings.Contains(js, `"network":true`) {
		t.Fatalf("policy_override is not in the old shape: %s", js)
	}

	// The new code opens the database: it migrates, then reads.
	if err := departments.Migrate(db); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(db); err != nil {
		t.Fatal(err)
	}
	var gotDept departments.Department
	if err := db.First(&gotDept, dept.ID).Error; err != nil {
		t.Fatal(err)
	}
	if gotDept.Defaults.Network == nil || *gotDept.Defaults.Network != api.NetworkOn {
		t.Errorf("department default_network 1 reads as %v, want on", gotDept.Defaults.Network)
	}
	var gotTask Task
	if err := db.First(&gotTask, task.ID).Error; err != nil {
		t.Fatal(err)
	}
	if gotTask.Overrides.Network == nil || *gotTask.Overrides.Network != api.NetworkOff {
		t.Errorf("task override_network 0 reads as %v, want off", gotTask.Overrides.Network)
	}
	var got []Run
	if err := db.Order("id").Find(&got).Error; err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Policy.Network != api.NetworkOn || got[1].Policy.Network != api.NetworkOff {
		t.Fatalf("runs read as %+v", got)
	}
	if got[0].PolicyOverride == nil || got[0].PolicyOverride.Network != api.NetworkOn {
		t.Errorf("policy_override {\"network\": true} reads as %+v, want on", got[0].PolicyOverride)
	}

	// And the migrated columns take the third value.
	if err := db.Model(&Run{}).Where("id = ?", got[1].ID).Update("policy_network", api.NetworkAllowlist).Error; err != nil {
		t.Fatal(err)
	}
	var again Run
	if err := db.First(&again, got[1].ID).Error; err != nil {
		t.Fatal(err)
	}
	if again.Policy.Network != api.NetworkAllowlist {
		t.Errorf("allowlist written, %q read", again.Policy.Network)
	}
}
