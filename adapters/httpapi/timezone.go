package httpapi

import (
	"os"
	"strings"
	"time"
)

// TimeZoneName names loc the way a person or a cron library would: the IANA
// name, found through TZ or /etc/localtime when Go only knows it as "Local".
func TimeZoneName(loc *time.Location) string {
	if name := loc.String(); name != "Local" {
		return name
	}
	if tz := strings.TrimPrefix(os.Getenv("TZ"), ":"); tz != "" {
		return tz
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(target, "zoneinfo/"); ok {
			return name
		}
	}
	if b, err := os.ReadFile("/etc/timezone"); err == nil {
		if name := strings.TrimSpace(string(b)); name != "" {
			return name
		}
	}
	return "UTC"
}
