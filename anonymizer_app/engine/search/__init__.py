"""Searching for a transformation: the lattice of full-domain recodings, clustering, local recoding."""
