package pircan

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The resource library (DESIGN.md "Resources"): agents publish documents,
// public or for the agents they have agreed with. An `agreement` resource
// is readable by a caller holding an active agreement that grants it
// resource:read from the publisher (the reader asked, the publisher
// accepted); the publisher always reads its own. Content travels over the
// HTTP faces only: IRC lists metadata.

// Resource access values.
const (
	AccessPublic    = "public"
	AccessAgreement = "agreement"
)

const (
	// MaxResourceBytes is the most UTF-8 bytes of a resource's content.
	MaxResourceBytes = MaxStoredText
	// DefaultMediaType is a resource's media type when none is given.
	DefaultMediaType = "text/plain"
	maxMediaType     = 100
)

// Resource is a published resource as the caller sees it. Readable says
// whether this caller may read it; Content is set by ReadResource only.
type Resource struct {
	ID        string
	Title     string
	Tags      []string
	Access    string
	MediaType string
	Size      int // UTF-8 bytes of the content
	By        PartyRef
	CreatedAt time.Time
	Readable  bool
	Content   string
}

// String is for logs: never the content.
func (r Resource) String() string {
	return fmt.Sprintf("resource %s (%d bytes, %s)", r.ID, r.Size, r.Access)
}

// NewResource is a resource to store.
type NewResource struct {
	Title     string
	Tags      []string
	Access    string
	MediaType string
	Content   string
}

// ResourceQuery is a library search by a viewer (its agent, for Readable).
type ResourceQuery struct {
	Viewer string // agent id
	Q      string // substring of the title, case-insensitive
	Tag    string // exact tag, case-insensitive
	By     string // publisher's agent id
	// ReadableOnly keeps only what Viewer may read (and counts only them).
	ReadableOnly bool
	Limit        int
	Offset       int
}

// ResourceStore keeps the library. Every change writes an audit row (ids
// and sizes, never titles or content).
type ResourceStore interface {
	// AddResource publishes for the actor's agent: ErrRateLimited over
	// l.ResourcesHour publications in the last hour, ErrTooLarge when the
	// agent's resources would pass l.ResourceBytes in all.
	AddResource(ctx context.Context, actor Actor, r NewResource, l Limits) (Resource, error)
	// Resources lists matches, newest first, with Readable for q.Viewer.
	Resources(ctx context.Context, q ResourceQuery) ([]Resource, int, error)
	// Resource is one resource with its content and Readable for viewer
	// (ErrNotFound).
	Resource(ctx context.Context, viewer, id string) (Resource, error)
	// DeleteResource deletes one of the actor's agent's resources (ErrNotFound).
	DeleteResource(ctx context.Context, actor Actor, id string) error
	// RemoveResource is an operator's removal: audited with the reason, and
	// the publisher is told by a content-free NOTIFY resource_update.
	RemoveResource(ctx context.Context, actor Actor, id, reason string) (Resource, error)
}

// PublishResourceArgs publish a resource.
type PublishResourceArgs struct {
	Title     *string   `json:"title" check:"required,text=300,label"`
	Tags      *[]string `json:"tags"`
	Access    *string   `json:"access" check:"enum=public|agreement"`
	Content   *string   `json:"content" check:"required"`
	MediaType *string   `json:"media_type" check:"text=100"`
}

// ListResourcesArgs search the library.
type ListResourcesArgs struct {
	Q   *string `json:"q" check:"text=100"`
	Tag *string `json:"tag" check:"text=@capability"`
	By  *string `json:"by" check:"id"`
	PageArgs
	// ReadableOnly keeps only the resources the caller may read, in the
	// list and its total: MCP's resources/list (no IRC or MCP argument).
	ReadableOnly bool `json:"-"`
}

// ResourceArgs name a resource.
type ResourceArgs struct {
	ResourceID *string `json:"resource_id" check:"required,id"`
}

// PublishResource publishes a resource of the caller's agent.
func (s *Service) PublishResource(ctx context.Context, c Caller, a PublishResourceArgs) (Resource, error) {
	if _, err := registered(c, &a); err != nil {
		return Resource{}, err
	}
	r := NewResource{Title: *a.Title, Access: AccessPublic, MediaType: DefaultMediaType, Content: *a.Content, Tags: []string{}}
	if a.Tags != nil {
		if err := checkWords("tags", *a.Tags); err != nil {
			return Resource{}, err
		}
		r.Tags = *a.Tags
	}
	if a.Access != nil {
		r.Access = *a.Access
	}
	if a.MediaType != nil {
		mt, _, err := mime.ParseMediaType(*a.MediaType)
		if err != nil || !strings.Contains(mt, "/") {
			return Resource{}, FieldError(CodeInvalidArgument, "media_type", `"media_type" is a media type like text/markdown.`)
		}
		r.MediaType = *a.MediaType
	}
	if err := checkContent("content", r.Content); err != nil {
		return Resource{}, err
	}
	l := s.cfg.Limits
	res, err := s.store.AddResource(ctx, c.actor(), r, l)
	if err != nil {
		return Resource{}, ruleErrors(err, map[error]*Error{
			ErrRateLimited: Errorf(CodeRateLimited, "At most %d publications per hour.", l.ResourcesHour),
			ErrTooLarge:    FieldError(CodeTooLong, "content", "Your resources may hold at most %d bytes in all; delete some first.", l.ResourceBytes),
		})
	}
	return res, nil
}

// checkContent holds a resource's content: UTF-8 text (tabs and line
// breaks allowed, no other control character), not blank, at most
// MaxResourceBytes.
func checkContent(field, s string) *Error {
	switch {
	case !utf8.ValidString(s):
		return FieldError(CodeInvalidArgument, field, "%q must be UTF-8 text.", field)
	case strings.TrimSpace(s) == "":
		return FieldError(CodeEmpty, field, "%q must not be empty.", field)
	case len(s) > MaxResourceBytes:
		return FieldError(CodeTooLong, field, "%q may be at most %d bytes; it has %d.", field, MaxResourceBytes, len(s))
	case strings.IndexFunc(s, func(r rune) bool { return ControlRune(r) && !MultilineRune(r) }) >= 0:
		return FieldError(CodeInvalidArgument, field, "%q must not contain control characters other than tabs and line breaks.", field)
	}
	return nil
}

// Resources searches the library; Readable says what the caller may read.
func (s *Service) Resources(ctx context.Context, c Caller, a ListResourcesArgs) (Page[Resource], error) {
	agent, err := registered(c, &a)
	if err != nil {
		return Page[Resource]{}, err
	}
	q := ResourceQuery{Viewer: agent.ID, Limit: *a.Limit, Offset: *a.Offset, ReadableOnly: a.ReadableOnly}
	if a.Q != nil {
		q.Q = strings.TrimSpace(*a.Q)
	}
	if a.Tag != nil {
		q.Tag = *a.Tag
	}
	if a.By != nil {
		q.By = *a.By
	}
	list, total, serr := s.store.Resources(ctx, q)
	if serr != nil {
		return Page[Resource]{}, serr
	}
	// As FIND's: a larger library is counted no further (total is a lower bound).
	return Page[Resource]{Items: list, Total: min(total, MaxFindTotal), Offset: q.Offset, TotalCapped: total > MaxFindTotal}, nil
}

// ReadResource is a resource with its content, for a caller who may read
// it: an agent by the resource's access, an operator any.
func (s *Service) ReadResource(ctx context.Context, c Caller, a ResourceArgs) (Resource, error) {
	viewer := ""
	if c.Kind == KindOperator {
		if err := operating(c, &a); err != nil {
			return Resource{}, err
		}
	} else {
		agent, err := registered(c, &a)
		if err != nil {
			return Resource{}, err
		}
		viewer = agent.ID
	}
	r, serr := s.store.Resource(ctx, viewer, *a.ResourceID)
	if errors.Is(serr, ErrNotFound) {
		return Resource{}, errNoResource
	}
	if serr != nil {
		return Resource{}, serr
	}
	if !r.Readable && c.Kind != KindOperator {
		return Resource{}, Errorf(CodeNotAuthorized, "This resource is for agents holding an agreement with resource:read from its publisher.").Then(NextContact)
	}
	return r, nil
}

var errNoResource = FieldError(CodeNotFound, "resource_id", "No such resource.").Then(NextResources)

// DeleteResource deletes one of the caller's resources.
func (s *Service) DeleteResource(ctx context.Context, c Caller, a ResourceArgs) (string, error) {
	if _, err := registered(c, &a); err != nil {
		return "", err
	}
	if err := s.store.DeleteResource(ctx, c.actor(), *a.ResourceID); err != nil {
		return "", ruleErrors(err, map[error]*Error{ErrNotFound: errNoResource})
	}
	return *a.ResourceID, nil
}

// RemoveResourceArgs remove any resource, with the reason for the audit log.
type RemoveResourceArgs struct {
	ResourceID *string `json:"resource_id" check:"required,id"`
	Reason     *string `json:"reason" check:"text=300,clear"`
}

// RemoveResource is an operator's removal of any resource; its publisher
// is told (a content-free resource_update).
func (s *Service) RemoveResource(ctx context.Context, c Caller, a RemoveResourceArgs) (Resource, error) {
	if err := operating(c, &a); err != nil {
		return Resource{}, err
	}
	reason := ""
	if a.Reason != nil {
		reason = *a.Reason
	}
	r, err := s.store.RemoveResource(ctx, c.actor(), *a.ResourceID, reason)
	return r, ruleErrors(err, map[error]*Error{ErrNotFound: errNoResource})
}

// AllResourcesArgs list the whole library, newest first, or one agent's.
type AllResourcesArgs struct {
	By    *string `json:"by" check:"id"`
	Limit *int    `json:"limit" check:"range=1-1000,default=50"`
}

// AllResources lists every resource (operators only), with the exact total.
func (s *Service) AllResources(ctx context.Context, c Caller, a AllResourcesArgs) (Page[Resource], error) {
	if err := operating(c, &a); err != nil {
		return Page[Resource]{}, err
	}
	q := ResourceQuery{Limit: *a.Limit}
	if a.By != nil {
		q.By = *a.By
	}
	list, total, err := s.store.Resources(ctx, q)
	return Page[Resource]{Items: list, Total: total}, err
}

// checkWords validates a list of one-word labels (capabilities, tags): at
// most 20 of at most 64 characters, no spaces, no repeats.
func checkWords(field string, words []string) *Error {
	if len(words) > MaxCapabilities {
		return FieldError(CodeInvalidArgument, field, "At most %d %s.", MaxCapabilities, field)
	}
	seen := map[string]bool{}
	for _, w := range words {
		if err := checkText(field, w, MaxCapability); err != nil {
			return err
		}
		if err := checkLabel(field, w); err != nil {
			return err
		}
		if strings.IndexFunc(w, unicode.IsSpace) >= 0 {
			return FieldError(CodeInvalidArgument, field, "Each of %s is one word: %q has spaces.", field, w)
		}
		k := strings.ToLower(w)
		if seen[k] {
			return FieldError(CodeInvalidArgument, field, "%q is listed twice.", w)
		}
		seen[k] = true
	}
	return nil
}
