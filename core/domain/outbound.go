package domain

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/agents-server/agents-server/core/errs"
)

// The settings an admin opens the outbound policy with. They are named
// here, beside the rule, because every refusal names them.
const (
	// OutboundAllowPrivateSetting lets members' configurations reach
	// every address.
	OutboundAllowPrivateSetting = "outbound_allow_private"
	// OutboundAllowedHostsSetting lists the hosts and networks members'
	// configurations may reach beside public addresses.
	OutboundAllowedHostsSetting = "outbound_allowed_hosts"
)

// OutboundPolicy says which network addresses a call the server makes on
// a configuration's behalf may reach: an MCP endpoint and its OAuth
// metadata, registration and token URLs, a provider's base URL, a skill
// import. A configuration an admin owns is Open; a member's reaches public
// addresses, plus what the admin allowed. The rule is checked on the
// address actually dialed — after DNS, and on every redirect — so a name
// resolving to a refused address is refused as the address itself is.
//
// The zero value is the strict policy.
type OutboundPolicy struct {
	// Open lets every address through: an admin's configuration, or the
	// outbound_allow_private setting.
	Open bool
	// Nets are the networks (outbound_allowed_hosts) reachable beside
	// public addresses.
	Nets []netip.Prefix
	// Hosts are the names (outbound_allowed_hosts) reachable whatever they
	// resolve to: "ollama.lan", or "*.corp.example" for its subdomains.
	Hosts []string
}

// OpenOutbound is the policy of what an admin configured.
var OpenOutbound = OutboundPolicy{Open: true}

// Key names the policy: two policies with one key decide alike, so the
// clients that dial for them may share connections.
func (p OutboundPolicy) Key() string {
	if p.Open {
		return "open"
	}
	var b strings.Builder
	b.WriteString("strict")
	for _, n := range p.Nets {
		b.WriteString(" " + n.String())
	}
	for _, h := range p.Hosts {
		b.WriteString(" " + h)
	}
	return b.String()
}

// PermitsHost reports whether a URL's host may be reached whatever it
// resolves to: the policy is open, or an admin allowed the name.
func (p OutboundPolicy) PermitsHost(host string) bool {
	if p.Open {
		return true
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, h := range p.Hosts {
		if suffix, ok := strings.CutPrefix(h, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
		} else if host == h {
			return true
		}
	}
	return false
}

// PermitsAddr returns nil when addr may be dialed, else an
// *OutboundRefusal saying which rule refused it and which settings open it.
func (p OutboundPolicy) PermitsAddr(addr netip.Addr) error {
	if p.Open {
		return nil
	}
	addr = addr.Unmap()
	class, restricted := RestrictedAddr(addr)
	if !restricted {
		return nil
	}
	for _, n := range p.Nets {
		if n.Contains(addr) {
			return nil
		}
	}
	return &OutboundRefusal{Addr: addr, Class: class}
}

// OutboundRefusal is a dial the outbound policy refused. Its message names
// the address, why it is refused and the settings that would allow it; it
// never says whether anything listens there.
type OutboundRefusal struct {
	Addr  netip.Addr
	Class string // loopback, private, link-local, ...
}

func (e *OutboundRefusal) Error() string {
	return fmt.Sprintf("the outbound policy refuses %s (a %s address) for a configuration a member owns; "+
		"an admin can allow it with the %s or %s setting", e.Addr, e.Class, OutboundAllowPrivateSetting, OutboundAllowedHostsSetting)
}

// restrictedNets are the ranges a member's configuration may not reach,
// with what they are. Order matters only for the name given.
var restrictedNets = []struct {
	net   netip.Prefix
	class string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"}, // Alibaba's metadata (100.100.100.200) too
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},       // the clouds' metadata (169.254.169.254)
	{netip.MustParsePrefix("168.63.129.16/32"), "metadata"},       // Azure's host service
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved"},
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"}, // and the broadcast address
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "reserved"}, // IPv4-compatible
	{netip.MustParsePrefix("fc00::/7"), "unique-local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
	{netip.MustParsePrefix("100::/64"), "reserved"},
	{netip.MustParsePrefix("2001:db8::/32"), "reserved"},
}

// embeddedV4 are IPv6 ranges that carry an IPv4 address a gateway may
// forward to: their v4 part is judged as itself.
var embeddedV4 = []struct {
	net    netip.Prefix
	offset int // the byte the v4 address starts at
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12},   // NAT64
	{netip.MustParsePrefix("64:ff9b:1::/48"), 12}, // local-use NAT64
	{netip.MustParsePrefix("2002::/16"), 2},       // 6to4
}

// RestrictedAddr reports whether addr is one a member's configuration may
// not reach, and what kind it is: loopback, private (RFC 1918), unique-local
// IPv6, link-local (the clouds' metadata addresses among them), carrier-grade
// NAT, unspecified, multicast, or another reserved range — IPv4 inside IPv6
// (mapped, NAT64, 6to4) judged by its IPv4 part.
func RestrictedAddr(addr netip.Addr) (string, bool) {
	addr = addr.Unmap()
	if !addr.IsValid() {
		return "invalid", true
	}
	for _, e := range embeddedV4 {
		if e.net.Contains(addr) {
			b := addr.As16()
			if class, bad := RestrictedAddr(netip.AddrFrom4([4]byte(b[e.offset : e.offset+4]))); bad {
				return class, true
			}
		}
	}
	for _, r := range restrictedNets {
		if r.net.Contains(addr) {
			return r.class, true
		}
	}
	return "", false
}

// ParseOutboundAllowlist reads outbound_allowed_hosts: entries separated by
// commas, spaces or new lines, each an IP address, a CIDR network, a host
// name or "*.domain" for its subdomains. It returns the canonical text with
// the networks and names. Returns validation naming the first bad entry.
func ParseOutboundAllowlist(text string) (string, []netip.Prefix, []string, error) {
	var nets []netip.Prefix
	var hosts, canon []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r' }) {
		f = strings.ToLower(strings.TrimSuffix(f, "."))
		if p, err := netip.ParsePrefix(f); err == nil {
			p = p.Masked()
			nets = append(nets, p)
			canon = append(canon, p.String())
			continue
		}
		if a, err := netip.ParseAddr(strings.Trim(f, "[]")); err == nil {
			p := netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
			nets = append(nets, p)
			canon = append(canon, p.String())
			continue
		}
		if !validHostPattern(f) {
			return "", nil, nil, errs.Field("value", "%q is not an IP address, a CIDR network, a host name or *.domain", f)
		}
		if !slices.Contains(hosts, f) {
			hosts = append(hosts, f)
			canon = append(canon, f)
		}
	}
	return strings.Join(canon, ", "), nets, hosts, nil
}

// validHostPattern accepts a DNS name, optionally led by "*.".
func validHostPattern(h string) bool {
	h = strings.TrimPrefix(h, "*.")
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}
