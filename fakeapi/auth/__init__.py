"""Who is asking and what they may do: identities (:mod:`.users`), request attributes
(:mod:`.attributes`), RBAC evaluation (:mod:`.rbac`) and its bootstrap policy
(:mod:`.bootstrap`), and the certificates of secure serving (:mod:`.tls`).

Pure of the server: the registry binds these to stored objects (``registry.access``) and the
server applies them to requests (``server.security``).
"""
