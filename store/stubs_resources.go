package store

import (
	"context"
	"errors"

	"github.com/creatimus/pircan/pircan"
)

// Placeholders while the resource library is built (branch resources);
// replaced by store/resources.go.
var errResourcesNotYet = errors.New("not implemented yet")

func (s *Store) AddResource(context.Context, pircan.Actor, pircan.NewResource, pircan.Limits) (pircan.Resource, error) {
	return pircan.Resource{}, errResourcesNotYet
}
func (s *Store) Resources(context.Context, pircan.ResourceQuery) ([]pircan.Resource, int, error) {
	return nil, 0, errResourcesNotYet
}
func (s *Store) Resource(context.Context, string, string) (pircan.Resource, error) {
	return pircan.Resource{}, errResourcesNotYet
}
func (s *Store) DeleteResource(context.Context, pircan.Actor, string) error {
	return errResourcesNotYet
}
func (s *Store) RemoveResource(context.Context, string, string, string) (pircan.Resource, error) {
	return pircan.Resource{}, errResourcesNotYet
}
