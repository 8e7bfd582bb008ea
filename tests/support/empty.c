/* Keeps the test support library non-empty. */
int ld_testsupport_empty_unit_(void);
