"""lyra studio: teach, watch and review in the browser; a second front end on the same loop.

The browser answers the loop's :class:`~lyra.teachers.Teacher` questions (:mod:`.teacher`), a
teaching run is :meth:`lyra.teach.Learner.teach` in a background thread (:mod:`.runs`), and the
pages read the library, memory, session logs and result tables the rest of lyra writes
(:mod:`.views`); :mod:`.app` serves them over a local ASGI server.
"""
