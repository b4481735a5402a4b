"""The scheduling queue: pending pods and pod groups, from their observation to their attempt.

- :mod:`.scheduling_queue`: :class:`SchedulingQueue`, moving entities between sub-queues on
  adds, attempts' outcomes and cluster events.
- :mod:`.entities`: what is queued: a pod, or a pod-group instance (gate ``GenericWorkload``)
  with its members' arrival bookkeeping.
- :mod:`.keyed_heap`, :mod:`.backoff_queue`: the active heap and the backoff heaps.
- :mod:`.waiting_pool`: the gated and unschedulable pools, indexed by plugin.
- :mod:`.queueing_hints`: which plugins an event concerns and what their hints say.
- :mod:`.in_flight`: pods in an attempt and the events that arrived meanwhile.
"""
