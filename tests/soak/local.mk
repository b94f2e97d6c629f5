# SPDX-License-Identifier: BSD-2-Clause
# Soak test and the fuzz targets of the control protocol and lookup service.
