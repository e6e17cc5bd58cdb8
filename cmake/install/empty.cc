// libtfjit.so's own translation unit: everything in it comes from the layers' archives.
