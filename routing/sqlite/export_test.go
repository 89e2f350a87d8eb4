package sqlite

// ReadConnsInUse reports the read pool's connections in use (for storetest.ConnGauge).
func (s *Store) ReadConnsInUse() int { return s.r.Stats().InUse }
