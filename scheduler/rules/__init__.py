"""Pure rules shared by the scheduler, the controllers and the kubelet emulation.

The bottom of the control plane: every function takes wire-shaped dicts and returns a value,
with no I/O, no clock and no event loop (an import-linter contract keeps it so), which is what
lets the scheduler, the controllers and the kubelet share these rules without importing each
other.

- :mod:`.keys`: ``namespace/name`` keys of objects (informer caches, indexes, messages).
- :mod:`.pods`: pod lifecycle predicates (terminal, done for good).
- :mod:`.podgroups`: which pod-group instance a pod belongs to; KEP-5729 group claims.
- :mod:`.claims`: ResourceClaim naming, generation, ownership and reservations.
"""
