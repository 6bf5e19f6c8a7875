// Package porttest holds small in-memory fakes of the ports, for core tests
// that want a service's rules without a real store or runtime. Each fake
// keeps the promises its port's doc comments state (error codes,
// ordering, transactions) and nothing more; adapters are tested against the
// real thing.
package porttest
