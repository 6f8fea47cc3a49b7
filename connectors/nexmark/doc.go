// Package nexmark is the 'nexmark' source connector: the event stream of the Nexmark
// benchmark (an online auction: people register, open auctions and bid on them), as
// Flink's nexmark connector exposes it, with the same option names and the same
// distributions of ids, prices, sizes and hot keys as the reference generator.
//
// A row is one event with the columns of Nexmark's DDL: event_type (0 person,
// 1 auction, 2 bid) and three ROW columns person, auction and bid of which exactly one is
// set. ROW fields are matched by name, so both the original bid row (auction, bidder,
// price, dateTime, extra) and the newer one with channel and url are served.
//
// Unlike the reference, whose Random is unseeded, every event is a pure function of the
// configuration and its event number: the same options give the same stream on every
// run, a restored source regenerates exactly the events it would have produced (its
// checkpoint is the number of events emitted), and the events' times start at
// 'base-time' (a pipesql option, fixed by default) instead of the wall clock.
package nexmark
