package httpapi

import (
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// APIPrefix is the only mount of the REST API.
const APIPrefix = "/api/v1"

// Access says who may call a route.
type Access int

// The access rules. Role checks (admin only, owner only) live in core.
const (
	Bearer Access = iota // a valid bearer token is required
	Public               // no token (health, login, the OpenAPI document)
)

// RateClass is the per-client-IP budget a route spends.
type RateClass int

// The budget classes.
const (
	ClassRead  RateClass = iota // GETs
	ClassWrite                  // everything that changes state
)

// NoBody is the request or response type of a route without a JSON body.
type NoBody struct{}

// QueryParam documents one query-string parameter (or request header).
type QueryParam struct {
	Name        string
	Type        string // integer, string, boolean
	Description string
	Bound       Bound // what the handler refuses, from its own constants
}

// Route is one row of the route table: it registers the echo route AND
// describes the operation in the OpenAPI document, so the two cannot drift.
type Route struct {
	Method      string
	Path        string // full echo path, e.g. /api/v1/auth/users/:id
	OperationID string
	Summary     string
	Tag         string
	Access      Access
	Status      int // success status
	Query       []QueryParam
	// Request and Response are the body types, taken from the handler's
	// signature by op; NoBody means none.
	Request  reflect.Type
	Response reflect.Type
	// RawType, when set, is the content type of a non-JSON success body.
	RawType string
	// BodyLimit overrides the default request body cap; BodyLimitFunc
	// computes it per request (a cap that follows a setting).
	BodyLimit     int64
	BodyLimitFunc func(echo.Context) int64
	// Upload, when set, names the multipart/form-data part the route
	// takes a file in: its body is an upload, not JSON.
	Upload string
	// OptionalBody lets the body be absent (read as an empty object).
	OptionalBody bool
	// RawBody, when set, takes the body as the bytes it is, of any type:
	// the handler reads it (a webhook checks a signature over it).
	RawBody bool
	// StreamType, when set, is a second content type of the success body a
	// client may ask for with Accept (a start that streams the run it
	// starts as text/event-stream).
	StreamType string
	// AltStatuses are further success statuses answering the same schema
	// (a handler that writes them itself).
	AltStatuses []int
	// Headers documents request headers the operation reads.
	Headers []QueryParam
	// Refuses lists the error codes the operation documents beyond those
	// every route shares (401/429 for bearer routes, 400 for bodies).
	Refuses []int
	// Requires lists body fields this operation demands although its
	// request type does not always (a create that names what an update
	// may keep).
	Requires []string
	// handler builds the echo handler from the finished row, so options
	// set after op (WithOptionalBody…) reach it.
	handler func(Route) echo.HandlerFunc
}

// Class is the rate budget the route spends: reads for GET, writes otherwise.
func (r Route) Class() RateClass {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return ClassRead
	}
	return ClassWrite
}

// HasBody reports whether the route takes a JSON request body.
func (r Route) HasBody() bool {
	return r.Upload != "" || r.RawBody || (r.Request != nil && r.Request != noBodyType)
}

// takesJSON reports whether the route's body is JSON (not an upload or raw
// bytes): the body decodeBody reads, labelled application/json.
func (r Route) takesJSON() bool { return r.HasBody() && r.Upload == "" && !r.RawBody }

// checksParams reports whether the route refuses a path or query parameter
// holding a NUL with the 400 envelope (refuseNULParams). A route answering
// 400 itself (AltStatuses: the MCP sign-in's callback page) reads its
// parameters without storing them, and keeps its own page.
func (r Route) checksParams() bool {
	return (len(r.PathParams()) > 0 || len(r.Query) > 0) && !slices.Contains(r.AltStatuses, http.StatusBadRequest)
}

// OpenAPIPath converts echo's :param syntax to OpenAPI's {param}.
func (r Route) OpenAPIPath() string {
	parts := strings.Split(r.Path, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

// PathParams lists the route's path parameter names.
func (r Route) PathParams() []string {
	var out []string
	for _, p := range strings.Split(r.Path, "/") {
		if strings.HasPrefix(p, ":") {
			out = append(out, p[1:])
		}
	}
	return out
}

var noBodyType = reflect.TypeFor[NoBody]()

// WithQuery documents query parameters.
func (r Route) WithQuery(q ...QueryParam) Route { r.Query = append(r.Query, q...); return r }

// WithHeaders documents request headers the operation reads.
func (r Route) WithHeaders(h ...QueryParam) Route { r.Headers = append(r.Headers, h...); return r }

// WithRefusals documents extra error statuses the operation answers.
func (r Route) WithRefusals(statuses ...int) Route {
	r.Refuses = append(r.Refuses, statuses...)
	return r
}

// WithRequired documents body fields this operation refuses to go without,
// beyond those its request type tags `required:"true"`.
func (r Route) WithRequired(fields ...string) Route {
	r.Requires = append(r.Requires, fields...)
	return r
}

// WithUpload makes the body a multipart/form-data upload of one file in
// the named part, capped at limit bytes.
func (r Route) WithUpload(part string, limit int64) Route {
	r.Upload, r.BodyLimit = part, limit
	return r
}

// WithRawBody makes the body opaque bytes of any type, capped at limit,
// which the handler reads itself.
func (r Route) WithRawBody(limit int64) Route {
	r.RawBody, r.BodyLimit = true, limit
	return r
}

// WithAltStatuses lists further statuses the handler writes itself, with
// the success body's content.
func (r Route) WithAltStatuses(statuses ...int) Route {
	r.AltStatuses = append(r.AltStatuses, statuses...)
	return r
}

// WithOptionalBody lets a client omit the body entirely.
func (r Route) WithOptionalBody() Route { r.OptionalBody = true; return r }

// PublicRoute marks the route as callable without a token.
func (r Route) PublicRoute() Route { r.Access = Public; return r }

// Handler is a typed operation: it gets the decoded request body and returns
// the response body or an error the envelope handler renders.
type Handler[Req, Resp any] func(c echo.Context, req *Req) (Resp, error)

// Encoded is a response body already encoded as JSON, documented (and
// validated in tests) as T: for reads that pass stored JSON through instead
// of decoding and re-encoding it.
type Encoded[T any] struct{ Bytes []byte }

func (Encoded[T]) docType() reflect.Type { return reflect.TypeFor[T]() }
func (e Encoded[T]) encoded() []byte     { return e.Bytes }

type preEncoded interface {
	docType() reflect.Type
	encoded() []byte
}

// op builds a route whose body types come from the handler's signature.
func op[Req, Resp any](method, path, id, tag, summary string, status int, h Handler[Req, Resp]) Route {
	r := Route{
		Method: method, Path: path, OperationID: id, Tag: tag, Summary: summary, Status: status,
		Request: reflect.TypeFor[Req](), Response: reflect.TypeFor[Resp](),
	}
	if pe, ok := any(*new(Resp)).(preEncoded); ok {
		r.Response = pe.docType()
	}
	r.handler = func(r Route) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := new(Req)
			if r.takesJSON() {
				if err := decodeBody(c.Request(), req, r.Request, r.Response, r.OptionalBody); err != nil {
					return err
				}
			}
			resp, err := h(c, req)
			if err != nil {
				return err
			}
			if c.Response().Committed {
				return nil // the handler chose its own status (AltStatuses)
			}
			if r.Response == noBodyType {
				return c.NoContent(r.Status)
			}
			if pe, ok := any(resp).(preEncoded); ok {
				return c.Blob(r.Status, echo.MIMEApplicationJSON, pe.encoded())
			}
			return c.JSON(r.Status, resp)
		}
	}
	return r
}

// raw builds a route that writes its own non-JSON body.
func raw(method, path, id, tag, summary, contentType string, h echo.HandlerFunc) Route {
	return Route{
		Method: method, Path: path, OperationID: id, Tag: tag, Summary: summary, Status: http.StatusOK,
		Request: noBodyType, Response: noBodyType, RawType: contentType, handler: func(Route) echo.HandlerFunc { return h },
	}
}
