package domain

import "github.com/agents-server/agents-server/core/errs"

// Scope says who sees a configurable row: its owner alone, or everyone.
type Scope string

// The two scopes.
const (
	ScopePrivate Scope = "private"
	ScopeGlobal  Scope = "global"
)

// Valid reports whether s is one of the scopes.
func (s Scope) Valid() bool { return s == ScopePrivate || s == ScopeGlobal }

// Ownership is the (scope, owner) pair every configurable entity carries —
// agents, providers and later MCP servers, skills and workflows. The owner is
// permanent; only the scope moves (publish, unpublish). Every access rule for
// these entities is a method here, so they are stated once.
type Ownership struct {
	Scope   Scope
	OwnerID string
}

// VisibleTo reports whether p may see the row at all: a global row is seen
// by everyone, a private one by its owner — and by admins, who administer
// configuration (list, publish, delete) without authoring other people's.
func (o Ownership) VisibleTo(p Principal) bool {
	return o.Scope == ScopeGlobal || o.OwnerID == p.User.ID || p.IsAdmin()
}

// CheckRead refuses a row p cannot see as absent, never as forbidden, so its
// existence leaks nothing. Returns not_found.
func (o Ownership) CheckRead(p Principal, what string) error {
	if !o.VisibleTo(p) {
		return errs.E(errs.NotFound, "%s not found", what)
	}
	return nil
}

// CheckUpdate allows an edit by the row's owner, or by an admin on a global
// row — never by an admin on someone's private row (manage, not author).
// Returns not_found for an invisible row, forbidden for a visible one the
// caller may not edit.
func (o Ownership) CheckUpdate(p Principal, what string) error {
	if err := o.CheckRead(p, what); err != nil {
		return err
	}
	if o.OwnerID == p.User.ID || (o.Scope == ScopeGlobal && p.IsAdmin()) {
		return nil
	}
	if o.Scope == ScopeGlobal {
		return errs.E(errs.Forbidden, "this %s is shared configuration: only an admin or its author can change it", what)
	}
	return errs.E(errs.Forbidden, "this %s is private to its owner: an admin may publish or delete it, not edit it", what)
}

// CheckDelete allows the owner and admins to delete a row. Returns
// not_found for an invisible row, forbidden for a visible one.
func (o Ownership) CheckDelete(p Principal, what string) error {
	if err := o.CheckRead(p, what); err != nil {
		return err
	}
	if o.OwnerID == p.User.ID || p.IsAdmin() {
		return nil
	}
	return errs.E(errs.Forbidden, "this %s is shared configuration: only an admin or its author can delete it", what)
}

// CheckCreate allows anyone to create a private row and admins a global one.
// Returns validation for an unknown scope, forbidden for a member's global.
func CheckCreate(p Principal, scope Scope, what string) error {
	if !scope.Valid() {
		return errs.Field("scope", "must be private or global")
	}
	if scope == ScopeGlobal && !p.IsAdmin() {
		return errs.E(errs.Forbidden, "only an admin can create a global %s", what)
	}
	return nil
}

// CheckScopeChange allows publishing (private → global) to admins and
// unpublishing (global → private) to admins and the author. Returns
// validation, not_found, forbidden, or conflict when the row already has
// that scope.
func (o Ownership) CheckScopeChange(p Principal, to Scope, what string) error {
	if !to.Valid() {
		return errs.Field("scope", "must be private or global")
	}
	if err := o.CheckRead(p, what); err != nil {
		return err
	}
	if o.Scope == to {
		return errs.E(errs.Conflict, "this %s is already %s", what, to)
	}
	if to == ScopeGlobal && !p.IsAdmin() {
		return errs.E(errs.Forbidden, "only an admin can publish a %s", what)
	}
	if to == ScopePrivate && !p.IsAdmin() && o.OwnerID != p.User.ID {
		return errs.E(errs.Forbidden, "only an admin or its author can unpublish this %s", what)
	}
	return nil
}

// MayReference reports whether a row held as o may point at target: a
// private row may use global rows and its owner's private rows, a global row
// only global ones — what everyone can see may not lean on what they cannot.
func (o Ownership) MayReference(target Ownership) bool {
	if target.Scope == ScopeGlobal {
		return true
	}
	return o.Scope == ScopePrivate && target.OwnerID == o.OwnerID
}

// ReferenceSurvives reports whether a reference from holder to target would
// still be allowed if target had the given scope. It decides whether an
// unpublish must be refused.
func ReferenceSurvives(holder, target Ownership, targetScope Scope) bool {
	target.Scope = targetScope
	return holder.MayReference(target)
}

// VisibleOrdered keeps the rows p can see, in listing order: for a member,
// other people's shared rows first, then their own; for an admin, one flat
// list. Each keeps the input order (newest first, as stores return them).
func VisibleOrdered[T any](rows []T, p Principal, own func(T) Ownership) []T {
	if p.IsAdmin() {
		return append([]T{}, rows...)
	}
	shared, mine := []T{}, []T{}
	for _, r := range rows {
		o := own(r)
		switch {
		case o.OwnerID == p.User.ID:
			mine = append(mine, r)
		case o.VisibleTo(p):
			shared = append(shared, r)
		}
	}
	return append(shared, mine...)
}
