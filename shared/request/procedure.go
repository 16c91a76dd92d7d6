package request

// Procedure checks procedure: a procedure id as the corpus writes them (3 to 64 lowercase
// letters, digits and hyphens); missing (or null) is "" (every procedure). Whether a procedure
// of that id is in force on the day asked is the service's to say.
func Procedure(procedure *string) (string, *Error) {
	if procedure == nil {
		return "", nil
	}
	p := *procedure
	ok := len(p) >= 3 && len(p) <= 64
	for i := 0; ok && i < len(p); i++ {
		c := p[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
	}
	if !ok {
		return "", Invalid("procedure", "procedure must be a procedure id (3 to 64 lowercase letters, digits and hyphens), as a clarification's options give it")
	}
	return p, nil
}
