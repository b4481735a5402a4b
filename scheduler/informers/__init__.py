"""client-go's informer split: reflector (list/watch/resume/410) -> indexed cache -> handlers."""

from scheduler.informers.cache import Lister, key_for, object_key
from scheduler.informers.factory import InformerFactory
from scheduler.informers.informer import Informer

__all__ = ["Informer", "InformerFactory", "Lister", "key_for", "object_key"]
