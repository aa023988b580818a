package sqlitedb_test

import (
	"path/filepath"
	"slices"
	"testing"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/internal/sqlitedb"
	"github.com/airlock-app/airlock/internal/testdb"
)

type row struct {
	ID   int
	Tool string
	Kind string
}

// An empty filter adds no condition; set ones are ANDed.
func TestEqIfSet(t *testing.T) {
	db := testdb.Open(t, filepath.Join(t.TempDir(), "eq.db"), func(db *gorm.DB) error { return db.AutoMigrate(&row{}) })
	for _, r := range []row{{1, "bash", "a"}, {2, "bash", "b"}, {3, "read_file", "a"}} {
		if err := db.Create(&r).Error; err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name       string
		tool, kind string
		want       []int
	}{
		{"no filter", "", "", []int{1, 2, 3}},
		{"one set", "bash", "", []int{1, 2}},
		{"both set", "bash", "a", []int{1}},
		{"a value with a quote stays a value", "bash' OR '1'='1", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []row
			if err := db.Scopes(sqlitedb.EqIfSet("tool", tt.tool), sqlitedb.EqIfSet("kind", tt.kind)).Order("id").Find(&got).Error; err != nil {
				t.Fatal(err)
			}
			var ids []int
			for _, r := range got {
				ids = append(ids, r.ID)
			}
			if !slices.Equal(ids, tt.want) {
				t.Errorf("ids = %v, want %v", ids, tt.want)
			}
		})
	}
}
