package pircan

import (
	"context"
	"errors"
	"time"
)

// Feature requests (post_features): an agent asks the operator for a new
// tool. Each new one is an audit row, which `pircan audit --follow` prints
// the moment it commits; the operator (or a grant holder) decides it.

// Feature statuses.
const (
	FeatureOpen      = "open"
	FeatureAccepted  = "accepted"
	FeatureDeclined  = "declined"
	FeatureDone      = "done"
	FeatureDuplicate = "duplicate"
)

var FeatureStatuses = []string{FeatureOpen, FeatureAccepted, FeatureDeclined, FeatureDone, FeatureDuplicate}

// Limits of a feature request.
const (
	MaxFeatureTitle = 120
	MaxFeatureBody  = 2000
)

// Feature is a feature request.
type Feature struct {
	ID        int64
	Title     string
	Body      string
	Author    Line
	Status    string
	Note      string
	DecidedBy string // an identity ("": nobody yet)
	CreatedAt time.Time
	UpdatedAt time.Time
}

// FeatureArgs ask for a feature.
type FeatureArgs struct {
	Title *string   `json:"title" check:"required,text=@feature_title,label"`
	Body  *string   `json:"body" check:"required,text=@feature_body,lines"`
	From  *FromArgs `json:"from"`
}

// FeaturesArgs list feature requests.
type FeaturesArgs struct {
	Status *string `json:"status" check:"enum=@features"`
	ForumPageArgs
}

// FeatureStatusArgs decide a feature request.
type FeatureStatusArgs struct {
	ID     *Key    `json:"id" check:"required"`
	Status *string `json:"status" check:"required,enum=@features"`
	Note   *string `json:"note" check:"text=500,lines"`
}

// FeatureStore keeps feature requests.
type FeatureStore interface {
	// AddFeature stores a feature request with its audit row (under the
	// line's lock): ErrRateLimited over l.ForumFeaturesDay a day.
	AddFeature(ctx context.Context, actor ForumActor, f Feature, l Limits) (Feature, error)
	// Features lists requests, newest first: of account ("": all), in status ("": any).
	Features(ctx context.Context, account, status string, limit, offset int) ([]Feature, int, error)
	// SetFeatureStatus changes a request's status with an audit row: ErrNotFound.
	SetFeatureStatus(ctx context.Context, actor ForumActor, id int64, status, note string) (Feature, error)
	// FeatureCounts are the requests by status (the metric).
	FeatureCounts(ctx context.Context) (map[string]int64, error)
}

// AddFeature files a feature request (write).
func (s *Service) AddFeature(ctx context.Context, c Caller, a FeatureArgs) (Feature, error) {
	if err := checkForumArgs(&a); err != nil {
		return Feature{}, err
	}
	var ext *string
	if a.From != nil {
		ext = a.From.Extension
	}
	actor, err := s.forumActor(ctx, c, ext, RightWrite)
	if err != nil {
		return Feature{}, err
	}
	if actor.IsHuman() {
		return Feature{}, Errorf(CodeForbidden, "Feature requests come from agents; humans decide them.")
	}
	l := s.cfg.Limits
	f, err := s.store.AddFeature(ctx, actor, Feature{Title: *a.Title, Body: *a.Body}, l)
	if err != nil {
		return Feature{}, ruleErrors(err, map[error]*Error{
			ErrRateLimited: countLimited("At most %d feature requests a day.", l.ForumFeaturesDay, DayWindow),
		})
	}
	return f, nil
}

// Features lists feature requests: one's own; all for a grant holder or
// a human.
func (s *Service) Features(ctx context.Context, c Caller, a FeaturesArgs) (Page[Feature], error) {
	if err := reader(c); err != nil {
		return Page[Feature]{}, err
	}
	if err := checkForumArgs(&a); err != nil {
		return Page[Feature]{}, err
	}
	account := ""
	if !c.Human() {
		rights, err := s.CallerRights(ctx, c)
		if err != nil {
			return Page[Feature]{}, err
		}
		if needRight(rights, RightGrant) != nil {
			account = c.Account
		}
	}
	status := ""
	if a.Status != nil {
		status = *a.Status
	}
	list, total, err := s.store.Features(ctx, account, status, *a.Limit, *a.Offset)
	return Page[Feature]{Items: list, Total: total, Offset: *a.Offset}, err
}

// SetFeatureStatus decides a feature request (a human or a grant holder).
func (s *Service) SetFeatureStatus(ctx context.Context, c Caller, a FeatureStatusArgs) (Feature, error) {
	if err := checkForumArgs(&a); err != nil {
		return Feature{}, err
	}
	id, ok := a.ID.number(FeaturePrefix)
	if !ok {
		return Feature{}, invalidBody("id", RuleKey, `"id" is a feature request key (fr_<n>) or its number.`)
	}
	need := RightGrant
	if c.Human() {
		need = ""
	}
	actor, err := s.forumActor(ctx, c, nil, need)
	if err != nil {
		return Feature{}, err
	}
	note := ""
	if a.Note != nil {
		note = *a.Note
	}
	f, err := s.store.SetFeatureStatus(ctx, actor, id, *a.Status, note)
	if errors.Is(err, ErrNotFound) {
		return Feature{}, Errorf(CodeNotFound, "No feature request %s; see get_features.", FeatureKey(id))
	}
	return f, err
}
