package domain

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/agents-server/agents-server/core/errs"
)

func TestRestrictedAddresses(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1": "loopback", "127.9.9.9": "loopback", "::1": "loopback", "::ffff:127.0.0.1": "loopback",
		"10.1.2.3": "private", "172.16.0.1": "private", "172.31.255.255": "private", "192.168.1.1": "private",
		"169.254.169.254": "link-local", "fe80::1": "link-local", "fc00::1": "unique-local", "fd00:ec2::254": "unique-local",
		"100.64.0.1": "carrier-grade NAT", "100.100.100.200": "carrier-grade NAT", "168.63.129.16": "metadata",
		"0.0.0.0": "unspecified", "0.1.2.3": "unspecified", "::": "unspecified", "224.0.0.1": "multicast", "ff02::1": "multicast",
		"255.255.255.255": "reserved", "64:ff9b::a01:203": "private", "64:ff9b::7f00:1": "loopback", "2002:7f00:1::": "loopback",
		"::7f00:1": "reserved",
		"8.8.8.8":  "", "140.82.112.3": "", "2606:4700::1111": "", "172.32.0.1": "", "100.128.0.1": "", "64:ff9b::808:808": "",
	} {
		class, bad := RestrictedAddr(netip.MustParseAddr(addr))
		if bad != (want != "") || class != want {
			t.Errorf("RestrictedAddr(%s) = %q %v, want %q", addr, class, bad, want)
		}
	}
}

func TestOutboundPolicy(t *testing.T) {
	loop := netip.MustParseAddr("127.0.0.1")
	var refusal *OutboundRefusal
	if err := (OutboundPolicy{}).PermitsAddr(loop); !errors.As(err, &refusal) || refusal.Class != "loopback" {
		t.Fatalf("strict: %v", err)
	}
	if err := (OutboundPolicy{}).PermitsAddr(netip.MustParseAddr("1.1.1.1")); err != nil {
		t.Fatalf("a public address: %v", err)
	}
	if OpenOutbound.PermitsAddr(loop) != nil || !OpenOutbound.PermitsHost("anything.internal") {
		t.Fatal("the open policy refuses")
	}
	canon, nets, hosts, err := ParseOutboundAllowlist(" 10.1.2.0/24, ollama.LAN\n*.corp.example 127.0.0.1, ollama.lan ")
	if err != nil || canon != "10.1.2.0/24, ollama.lan, *.corp.example, 127.0.0.1/32" || len(nets) != 2 || len(hosts) != 2 {
		t.Fatalf("parse: %q %v %v %v", canon, nets, hosts, err)
	}
	p := OutboundPolicy{Nets: nets, Hosts: hosts}
	if p.PermitsAddr(netip.MustParseAddr("10.1.2.9")) != nil || p.PermitsAddr(loop) != nil || p.PermitsAddr(netip.MustParseAddr("10.1.3.1")) == nil {
		t.Fatal("the allowed networks")
	}
	if !p.PermitsHost("OLLAMA.lan.") || !p.PermitsHost("a.b.corp.example") || p.PermitsHost("corp.example") || p.PermitsHost("evilcorp.example") {
		t.Fatal("the allowed names")
	}
	if p.Key() == (OutboundPolicy{}).Key() || p.Key() == OpenOutbound.Key() {
		t.Fatal("keys collide")
	}
	for _, bad := range []string{"http://x", "a..b", "-x.com", "x/33", "10.0.0.0/40", "ex ample!"} {
		if _, _, _, err := ParseOutboundAllowlist(bad); errs.CodeOf(err) != errs.Validation {
			t.Errorf("%q: %v, want validation", bad, err)
		}
	}
}
