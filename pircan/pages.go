package pircan

// How every list is paged, on every face: a page of at most MaxPage items
// from an offset of at most MaxOffset.

// MaxPage is the most items one page of a list holds, on every face.
const MaxPage = 10

// MaxOffset is the furthest a list's page may start, on every face.
const MaxOffset = 10000

// PageArgs ask for one page of a list: limit items from offset. A list
// whose page differs says so where it embeds them, as options for the
// field ("limit.default=10": ContactsArgs).
type PageArgs struct {
	Limit  *int `json:"limit" check:"range=@page,default=5"`
	Offset *int `json:"offset" check:"range=@offset,default=0"`
}

// Page is one page of a list: its items, how many there are in all (up to
// a cap, then TotalCapped) and where the page starts.
type Page[T any] struct {
	Items       []T
	Total       int
	Offset      int
	TotalCapped bool
}
