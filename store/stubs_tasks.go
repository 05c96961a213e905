package store

import (
	"context"
	"errors"

	"github.com/creatimus/pircan/pircan"
)

// Placeholders while tasks are built (branch tasks); replaced by
// store/tasks.go.
var errTasksNotYet = errors.New("not implemented yet")

func (s *Store) AddTask(context.Context, pircan.Actor, pircan.NewTask, pircan.Limits) (pircan.Task, error) {
	return pircan.Task{}, errTasksNotYet
}
func (s *Store) Tasks(context.Context, string, bool, string, int, int) ([]pircan.Task, int, error) {
	return nil, 0, errTasksNotYet
}
func (s *Store) Task(context.Context, string, string) (pircan.Task, error) {
	return pircan.Task{}, errTasksNotYet
}
func (s *Store) AnswerTask(context.Context, pircan.Actor, string, string, string) (pircan.Task, error) {
	return pircan.Task{}, errTasksNotYet
}
func (s *Store) CancelTask(context.Context, pircan.Actor, string) (pircan.Task, error) {
	return pircan.Task{}, errTasksNotYet
}
