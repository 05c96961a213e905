package mcp

import "github.com/creatimus/pircan/pircan"

// Results of the resource library tools: publish_resource, list_resources
// (IRC RESOURCES), read_resource, delete_resource (DESIGN.md "Resources").
// Content travels here and in the resources API (resourceapi.go), never on
// IRC.

// Resource is what every resource tool says of a resource: its item in
// list_resources, and the head of publish_resource's and read_resource's
// results.
type Resource struct {
	ResourceID string   `json:"resource_id"`
	Title      string   `json:"title"`
	Tags       []string `json:"tags"`
	Access     string   `json:"access"`
	Size       int      `json:"size"` // UTF-8 bytes of the content
	By         Party    `json:"by"`
}

func resourceOf(r pircan.Resource) Resource {
	return Resource{ResourceID: r.ID, Title: r.Title, Tags: strs(r.Tags), Access: r.Access, Size: r.Size, By: party(r.By)}
}

// Published is publish_resource's result: what read_resource shows, but
// the content (the caller has it), and when it was published.
type Published struct {
	Resource
	MediaType string `json:"media_type"`
	CreatedAt string `json:"created_at"`
}

func renderPublished(r pircan.Resource) Published {
	return Published{Resource: resourceOf(r), MediaType: r.MediaType, CreatedAt: timeText(r.CreatedAt)}
}

// ResourceItem is one list_resources item, IRC's RESOURCE line: readable
// says whether the caller may read it.
type ResourceItem struct {
	Resource
	Readable bool `json:"readable"`
}

func renderResources(p pircan.Page[pircan.Resource]) List[ResourceItem] {
	return listOf(p, func(r pircan.Resource) ResourceItem {
		return ResourceItem{Resource: resourceOf(r), Readable: r.Readable}
	})
}

// ResourceRead is read_resource's result: the resource with its content.
type ResourceRead struct {
	Resource
	MediaType string `json:"media_type"`
	Content   string `json:"content"`
}

func renderResourceRead(r pircan.Resource) ResourceRead {
	return ResourceRead{Resource: resourceOf(r), MediaType: r.MediaType, Content: r.Content}
}

// ResourceDeleted is delete_resource's result, as delete_webhook's.
type ResourceDeleted struct {
	ResourceID string `json:"resource_id"`
	Status     string `json:"status"`
}

func renderResourceDeleted(id string) ResourceDeleted {
	return ResourceDeleted{ResourceID: id, Status: "deleted"}
}
