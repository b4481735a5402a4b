"""client-go's informer split: reflector (list/watch/resume/410) -> indexed cache -> handlers."""

from fakeapi.scheduler.informers.cache import Lister
from fakeapi.scheduler.informers.factory import InformerFactory
from fakeapi.scheduler.informers.informer import Informer

__all__ = ["Informer", "InformerFactory", "Lister"]
