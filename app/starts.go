package app

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/buildinfo"

	"gorm.io/gorm"
)

// CoreStart records each start of the core, so a start can tell that the previous one
// ended without a clean stop (killed, crashed, power loss).
type CoreStart struct {
	ID        uint      `gorm:"primaryKey"`
	PID       int       `gorm:"not null"`
	Kind      string    `gorm:"not null"`
	Version   string    `gorm:"not null"`
	StartedAt time.Time `gorm:"not null"`
	StoppedAt *time.Time
}

// PreviousStart describes the start before this one.
type PreviousStart = api.PreviousStart

func migrateCore(db *gorm.DB) error { return db.AutoMigrate(&CoreStart{}) }

// recordStart notes this start and returns the previous one, if any.
func (c *Core) recordStart(ctx context.Context) (*PreviousStart, error) {
	var prev CoreStart
	var out *PreviousStart
	err := c.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Order("id desc").Limit(1).Find(&prev)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected > 0 {
			out = &PreviousStart{Kind: prev.Kind, PID: prev.PID, StartedAt: prev.StartedAt, StoppedAt: prev.StoppedAt, Clean: prev.StoppedAt != nil}
		}
		c.startRow = CoreStart{PID: os.Getpid(), Kind: string(c.Kind), Version: buildinfo.Version, StartedAt: c.StartedAt.UTC()}
		return tx.Create(&c.startRow).Error
	})
	if err != nil {
		return nil, fmt.Errorf("record start: %w", err)
	}
	return out, nil
}

func (c *Core) recordStop() error {
	if c.startRow.ID == 0 {
		return nil
	}
	now := time.Now().UTC()
	return c.DB.Model(&CoreStart{}).Where("id = ?", c.startRow.ID).Update("stopped_at", now).Error
}
