// Package ports declares what core needs from the outside world — stores,
// clocks, id sources and later model providers and sandbox runtimes — as
// interfaces, one file per port. Adapters implement them; only workbench wires them.
package ports
