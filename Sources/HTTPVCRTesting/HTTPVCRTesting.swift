import HTTPVCR
