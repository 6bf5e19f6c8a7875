package scripted

import "net/http"

// Each vendor answers a failure in its own error shape with its own words;
// the bodies below are theirs, so an adapter's error mapping is tested
// against what the provider really sends. The same body travels as an error
// event when a failure comes after the stream began (Failure.MidStream).

// Default messages, as the vendors word them.
const (
	openAIRateLimitMessage    = "Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s. Visit https://platform.openai.com/account/rate-limits to learn more."
	openAIServerMessage       = "The server had an error while processing your request. Sorry about that!"
	openAIOverloadedMessage   = "The engine is currently overloaded, please try again later"
	anthropicRateLimitMessage = "Number of request tokens has exceeded your per-minute rate limit (https://docs.anthropic.com/en/api/rate-limits); see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."
)

// statusFor is the HTTP status the vendor of api answers f with: 400 for
// an overflow, the vendor's overloaded status (Anthropic 529, OpenAI 503),
// else f.Status, 500 when unset.
func statusFor(api string, f Failure) int {
	switch {
	case f.Overflow:
		return http.StatusBadRequest
	case f.Overloaded && api == APIMessages:
		return 529
	case f.Overloaded:
		return http.StatusServiceUnavailable
	case f.Status == 0:
		return http.StatusInternalServerError
	}
	return f.Status
}

// writeFailure answers f in the error shape of api's vendor.
func writeFailure(w http.ResponseWriter, api string, f Failure) {
	status, body := failureBody(api, f)
	writeJSON(w, status, body)
}

// failureBody is the status and error body api's vendor answers f with.
func failureBody(api string, f Failure) (int, map[string]any) {
	f.Status = statusFor(api, f)
	if api == APIMessages {
		return f.Status, anthropicError(f)
	}
	return f.Status, openAIError(api, f)
}

// openAIError is {"error":{message,type,param,code}} as OpenAI writes it.
func openAIError(api string, f Failure) map[string]any {
	typ, code, param := "invalid_request_error", any(nil), any(nil)
	msg := f.Message
	def := ""
	switch {
	case f.Overflow:
		code = "context_length_exceeded"
		param, def = "input", "Your input exceeds the context window of this model. Please adjust your input and try again."
		if api == APIChatCompletions {
			param, def = "messages", "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages."
		}
	case f.Status == http.StatusUnauthorized:
		code, def = "invalid_api_key", "Incorrect API key provided."
	case f.Status == http.StatusTooManyRequests:
		typ, code, def = "requests", "rate_limit_exceeded", openAIRateLimitMessage
	case f.Overloaded:
		typ, def = "server_error", openAIOverloadedMessage
	case f.Status >= 500:
		typ, def = "server_error", openAIServerMessage
	}
	if msg == "" {
		msg = def
	}
	if msg == "" {
		msg = http.StatusText(f.Status)
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": param, "code": code}}
}

// anthropicError is {"type":"error","error":{type,message}} with the error
// type Anthropic uses for the status.
func anthropicError(f Failure) map[string]any {
	msg := f.Message
	if f.Overflow && msg == "" {
		msg = "prompt is too long: 210000 tokens > 200000 maximum"
	}
	typ, def := "invalid_request_error", ""
	switch f.Status {
	case http.StatusUnauthorized:
		typ, def = "authentication_error", "invalid x-api-key"
	case http.StatusForbidden:
		typ, def = "permission_error", "Your API key does not have permission to use the specified resource."
	case http.StatusNotFound:
		typ, def = "not_found_error", "The requested resource could not be found."
	case http.StatusRequestEntityTooLarge:
		typ, def = "request_too_large", "Request exceeds the maximum allowed number of bytes."
	case http.StatusTooManyRequests:
		typ, def = "rate_limit_error", anthropicRateLimitMessage
	case 529:
		typ, def = "overloaded_error", "Overloaded"
	default:
		if f.Status >= 500 {
			typ, def = "api_error", "Internal server error"
		}
	}
	if msg == "" {
		msg = def
	}
	if msg == "" {
		msg = http.StatusText(f.Status)
		if msg == "" {
			msg = "error"
		}
	}
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}

// responsesFailure is the error a failed Responses stream reports in its
// response.failed event: a code from the Responses error vocabulary.
func responsesFailure(f Failure) map[string]any {
	body := openAIError(APIResponses, f)["error"].(map[string]any)
	code, _ := body["code"].(string)
	if code == "" {
		code = "server_error"
		if statusFor(APIResponses, f) < 500 {
			code = "invalid_prompt"
		}
	}
	return map[string]any{"code": code, "message": body["message"]}
}
