"""The trace layer: trace files, replay (the state after any step), qlog export and import.

Everything here is a pure function of recorded `h3learn.events.Event`s; nothing in this
package runs the protocol or touches the network. See docs/events.md ("Trace files") for
the formats.
"""
